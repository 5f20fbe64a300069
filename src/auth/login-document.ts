// The password sign-in as REST runs it (GraphQL `login`): one document for POST /auth/login and the
// /oauth2/authorize sign-in page.
import { graphql } from '../generated/gql/index.js';

/** The password sign-in (`login`), shared by /auth/login and the /oauth2/authorize sign-in page. */
export const LoginDoc = graphql(`
  mutation RestLogin(
    $email: String!
    $password: String!
    $scope: String
    $codeChallenge: String
    $codeChallengeMethod: String
    $projectId: String
    $clientId: String
    $redirectUri: String
    $nonce: String
  ) {
    login(
      email: $email
      password: $password
      scope: $scope
      codeChallenge: $codeChallenge
      codeChallengeMethod: $codeChallengeMethod
      projectId: $projectId
      clientId: $clientId
      redirectUri: $redirectUri
      nonce: $nonce
    ) {
      login
      code
      mfaRequired
      mfaEnrollRequired
      enrollUri
      enrollQrCode
    }
  }
`);

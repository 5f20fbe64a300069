// Media types both the HTTP layer and the features need to recognise.

/** HL7 v2 messages (ER7 encoding), as Medplum's bots receive them. */
export const HL7_V2 = 'x-application/hl7-v2+er7';

/** The media type without parameters, lower-case ('' when absent). */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}
